func.func @main(%cond: tensor<1xi1>, %x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "tosa.cond_if"(%cond, %x) ({
  ^bb0(%a: tensor<2xi32>):
    "tosa.yield"(%a) : (tensor<2xi32>) -> ()
  }, {
  ^bb0(%b: tensor<2xi32>):
    "tosa.yield"(%b) : (tensor<2xi32>) -> ()
  }) : (tensor<1xi1>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
