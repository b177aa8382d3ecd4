// RESCALE with input_unsigned and output_unsigned both true: TOSA's
// ERROR_IF(input_unsigned && output_unsigned).  IREE compiles it (exit status 0).
func.func @main(%in: tensor<4xi16>) -> tensor<4xi16> {
  %m = "tosa.const"() <{values = dense<1073741824> : tensor<1xi32>}> : () -> tensor<1xi32>
  %s = "tosa.const"() <{values = dense<30> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %ozp = "tosa.const"() <{values = dense<0> : tensor<1xi16>}> : () -> tensor<1xi16>
  %0 = "tosa.rescale"(%in, %m, %s, %izp, %ozp) <{input_unsigned = true, output_unsigned = true, per_channel = false, rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true}> : (tensor<4xi16>, tensor<1xi32>, tensor<1xi8>, tensor<1xi16>, tensor<1xi16>) -> tensor<4xi16>
  return %0 : tensor<4xi16>
}
