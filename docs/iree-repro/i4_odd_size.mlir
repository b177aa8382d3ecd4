// An i4 tensor of 3 elements (1.5 bytes) cannot be stored: IREE's stream dialect wants a
// whole number of bytes.  CONV3D i8 x i4 with weights of 11x25x7 (odd) elements fails so.
func.func @main(%arg0: tensor<3xi8>) -> tensor<3xi8> {
  %c = "tosa.const"() <{values = dense<[7, -7, 3]> : tensor<3xi4>}> : () -> tensor<3xi4>
  %b = "util.optimization_barrier"(%c) : (tensor<3xi4>) -> tensor<3xi4>
  %w = "arith.extsi"(%b) : (tensor<3xi4>) -> tensor<3xi8>
  return %w : tensor<3xi8>
}
