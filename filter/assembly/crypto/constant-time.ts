// Comparison whose running time depends only on the length, never on where the inputs
// differ, so a tag check leaks nothing about the expected tag.

/** True when the `length` bytes at `a` and `b` are equal; a length of zero or less is equal. */
export function constantTimeEqual(a: usize, b: usize, length: i32): bool {
  let difference: u32 = 0;
  for (let i = 0; i < length; i++) {
    difference |= <u32>(load<u8>(a + <usize>i) ^ load<u8>(b + <usize>i));
  }
  return difference == 0;
}
