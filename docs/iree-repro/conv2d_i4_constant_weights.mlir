// CONV2D i8 x i4 -> i32 whose i4 weights are a constant that is not a splat.
func.func @main(%in: tensor<1x1x1x2xi8>, %bias: tensor<1xi32>) -> tensor<1x1x1x1xi32> {
  %w = "tosa.const"() <{values = dense<[[[[1, -2]]]]> : tensor<1x1x1x2xi4>}> : () -> tensor<1x1x1x2xi4>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi4>}> : () -> tensor<1xi4>
  %0 = "tosa.conv2d"(%in, %w, %bias, %izp, %wzp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x1x1x2xi8>, tensor<1x1x1x2xi4>, tensor<1xi32>, tensor<1xi8>, tensor<1xi4>) -> tensor<1x1x1x1xi32>
  return %0 : tensor<1x1x1x1xi32>
}
