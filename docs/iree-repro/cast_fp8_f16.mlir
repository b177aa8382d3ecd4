func.func @main(%arg0: tensor<4xf8E4M3FN>) -> tensor<4xf16> {
  %0 = "tosa.cast"(%arg0) : (tensor<4xf8E4M3FN>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
