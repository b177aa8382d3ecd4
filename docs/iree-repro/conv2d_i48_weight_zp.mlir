// CONV2D i16 x i8 -> i48 with a non-zero weight zero point.
func.func @main(%in: tensor<1x2x2x1xi16>, %w: tensor<1x1x1x1xi8>, %bias: tensor<1xi48>) -> tensor<1x2x2x1xi48> {
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %wzp = "tosa.const"() <{values = dense<127> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.conv2d"(%in, %w, %bias, %izp, %wzp) <{acc_type = i48, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x2x2x1xi16>, tensor<1x1x1x1xi8>, tensor<1xi48>, tensor<1xi16>, tensor<1xi8>) -> tensor<1x2x2x1xi48>
  return %0 : tensor<1x2x2x1xi48>
}
