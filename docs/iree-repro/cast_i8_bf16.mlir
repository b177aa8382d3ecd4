func.func @main(%arg0: tensor<4xi8>) -> tensor<4xbf16> {
  %0 = "tosa.cast"(%arg0) : (tensor<4xi8>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
