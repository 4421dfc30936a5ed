package io.github.piproto;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Doubles as JavaScript's {@code Number.prototype.toString} writes them (ECMA-262
 * Number::toString), which JSON.stringify uses: the shortest digits that read back as the same
 * double, in full from 1e-6 up to 1e21 and with an exponent outside that ({@code 1e+21}, {@code
 * 1e-7}); negative zero is {@code 0}. Java 17's {@link Double#toString} is not always the shortest
 * (JDK-4511638, fixed in 19) and writes {@code 1.0E21}, so the digits are found here.
 */
final class JsNumbers {
  /** Integers up to this are exact in a double and written digit for digit. */
  private static final double SAFE_INTEGER = 9007199254740992.0;

  private JsNumbers() {}

  /** {@code value} as JavaScript writes it; a non-finite double has no JSON text. */
  static String toString(double value) {
    if (!Double.isFinite(value)) {
      throw new IllegalArgumentException(value + " is not a JSON number");
    }
    if (value == 0) {
      return "0";
    }
    if (value == Math.rint(value) && Math.abs(value) <= SAFE_INTEGER) {
      return Long.toString((long) value); // the common case: a count, a timestamp
    }
    BigDecimal shortest = shortestDigits(value);
    BigInteger unscaled = shortest.unscaledValue();
    String digits = unscaled.abs().toString();
    int point = digits.length() - shortest.scale(); // the decimal point sits this far into digits
    return (value < 0 ? "-" : "") + placed(digits, point);
  }

  /**
   * The decimal with the fewest significant digits that reads back as {@code value}, trailing zeros
   * stripped; of two with as few, the one closer to it. Java's own digits read back, so the fewest
   * are no more; and where a precision has no such decimal, no smaller one has.
   */
  private static BigDecimal shortestDigits(double value) {
    BigDecimal exact = new BigDecimal(value);
    int precision = significantDigits(Double.toString(value));
    BigDecimal shortest = closest(exact, precision, value);
    for (precision -= 1; precision > 0; precision--) {
      BigDecimal shorter = closest(exact, precision, value);
      if (shorter == null) {
        break;
      }
      shortest = shorter;
    }
    return shortest.stripTrailingZeros();
  }

  /** How many significant digits Java's text of a double has: "1.25E-7" has 3. */
  private static int significantDigits(String text) {
    int exponent = text.indexOf('E');
    String digits =
        (exponent < 0 ? text : text.substring(0, exponent)).replace("-", "").replace(".", "");
    int first = 0;
    while (first < digits.length() - 1 && digits.charAt(first) == '0') {
      first++;
    }
    int last = digits.length();
    while (last > first + 1 && digits.charAt(last - 1) == '0') {
      last--;
    }
    return last - first;
  }

  /**
   * Of the decimals of {@code precision} digits next to {@code exact}, the closer one that reads
   * back as {@code value}; null when neither does. The nearest may miss where the one on the other
   * side still reads back (the gap below a power of two is half the one above), so both are tried.
   */
  private static BigDecimal closest(BigDecimal exact, int precision, double value) {
    BigDecimal down = exact.round(new MathContext(precision, RoundingMode.FLOOR));
    BigDecimal up = exact.round(new MathContext(precision, RoundingMode.CEILING));
    boolean downReads = readsAs(down, value);
    boolean upReads = readsAs(up, value);
    if (downReads && upReads) {
      return exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
    }
    return downReads ? down : upReads ? up : null;
  }

  private static boolean readsAs(BigDecimal decimal, double value) {
    return Double.parseDouble(decimal.toString()) == value;
  }

  /** The digits with the decimal point {@code point} digits in, as Number::toString places it. */
  private static String placed(String digits, int point) {
    int count = digits.length();
    if (count <= point && point <= 21) {
      return digits + "0".repeat(point - count);
    }
    if (0 < point && point <= 21) {
      return digits.substring(0, point) + "." + digits.substring(point);
    }
    if (-6 < point && point <= 0) {
      return "0." + "0".repeat(-point) + digits;
    }
    int exponent = point - 1;
    String fraction = count > 1 ? "." + digits.substring(1) : "";
    return digits.charAt(0) + fraction + "e" + (exponent > 0 ? "+" : "-") + Math.abs(exponent);
  }
}
