// A negative i48 constant comes back as its 48-bit pattern zero-extended:
// expected 3xi64=-2 -140737488355327 3, IREE returns 281474976710654 140737488355329 3.
func.func @main() -> tensor<3xi48> {
  %c = "tosa.const"() <{values = dense<[-2, -140737488355327, 3]> : tensor<3xi48>}> : () -> tensor<3xi48>
  %b = "util.optimization_barrier"(%c) : (tensor<3xi48>) -> tensor<3xi48>
  return %b : tensor<3xi48>
}
