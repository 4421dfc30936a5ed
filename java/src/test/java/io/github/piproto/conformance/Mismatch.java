package io.github.piproto.conformance;

/** A case whose outcome differs from what it expects; the message says how. */
final class Mismatch extends Exception {
  private static final long serialVersionUID = 1L;

  Mismatch(String why) {
    super(why);
  }
}
