# eval: a random arithmetic expression tree the server evaluates.
# Follows the "silly benchmarks" spec (specs/serialization-benchmarks.md).
@0xf981ed0be89246e8;

enum Operation {
  add @0;
  subtract @1;
  multiply @2;
  divide @3;
  modulus @4;
}

struct Expression {
  op @0 :Operation;
  left :union {
    value @1 :Int32;
    expression @2 :Expression;
  }
  right :union {
    value @3 :Int32;
    expression @4 :Expression;
  }
}

struct EvaluationResult {
  value @0 :Int32;
}
