// RFFT2D of [[NaN, 1], [1, 1]]: the imaginary part at frequency (0, 0) sums value * sin(0);
// IEEE arithmetic (and IREE) gives NaN * 0 = NaN, our reference expects 0.
func.func @main(%arg0: tensor<1x2x2xf32>) -> (tensor<1x2x2xf32>, tensor<1x2x2xf32>) {
  %0:2 = "tosa.rfft2d"(%arg0) <{local_bound = false}> : (tensor<1x2x2xf32>) -> (tensor<1x2x2xf32>, tensor<1x2x2xf32>)
  return %0#0, %0#1 : tensor<1x2x2xf32>, tensor<1x2x2xf32>
}
