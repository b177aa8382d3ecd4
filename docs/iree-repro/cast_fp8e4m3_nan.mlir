// 0x7F and 0xFF are NaN in f8E4M3FN; IREE returns them as 480 and -480.
func.func @main(%arg0: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  %0 = "tosa.cast"(%arg0) : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
