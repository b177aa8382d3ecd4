// WHILE_LOOP nested 2 deep
func.func @main(%a: tensor<i32>) -> tensor<i32> {
  %w2 = "tosa.while_loop"(%a) ({
  ^bb0(%c2: tensor<i32>):
    %t2 = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %p2 = "tosa.greater"(%t2, %c2) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "tosa.yield"(%p2) : (tensor<i1>) -> ()
  }, {
  ^bb0(%b2: tensor<i32>):
    %w1 = "tosa.while_loop"(%b2) ({
    ^bb0(%c1: tensor<i32>):
      %t1 = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %p1 = "tosa.greater"(%t1, %c1) : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "tosa.yield"(%p1) : (tensor<i1>) -> ()
    }, {
    ^bb0(%b1: tensor<i32>):
      %o1 = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %n1 = "tosa.add"(%b1, %o1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "tosa.yield"(%n1) : (tensor<i32>) -> ()
    }) : (tensor<i32>) -> tensor<i32>
    %o2 = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %n2 = "tosa.add"(%w1, %o2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "tosa.yield"(%n2) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> tensor<i32>
  return %w2 : tensor<i32>
}
