// Serial meanings of the primitives and the serial layers (the oracle): see the headers here.
