package io.github.piproto;

/**
 * A line of a pi session file that is not one JSON entry, which {@link PiJson#sessionFromPi(String,
 * java.util.List)} reads as an {@code unparsed_line}, kept byte for byte.
 *
 * @param line the line's number, counted from 1
 * @param message why the line is not one JSON entry
 */
public record SessionWarning(int line, String message) {}
