// CONV2D of a 1x1 input [2] with a 1x2 kernel [inf, 1] and pad_left = 1: TOSA skips the
// padded position (the pseudocode reads only 0 <= x < IW), so output[0] = 2 * 1 = 2.
// IREE pads with zeros and multiplies them: 0 * inf + 2 = NaN.
func.func @main(%in: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  %w = "tosa.const"() <{values = dense<[[[[0x7F800000], [1.0]]]]> : tensor<1x1x2x1xf32>}> : () -> tensor<1x1x2x1xf32>
  %bias = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = "tosa.conv2d"(%in, %w, %bias, %zp, %zp) <{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 1>}> : (tensor<1x1x1x1xf32>, tensor<1x1x2x1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x1x1xf32>
  return %0 : tensor<1x1x1x1xf32>
}
