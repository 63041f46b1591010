package io.brokerstream.streams.http;

import java.nio.charset.StandardCharsets;

/**
 * Text the edge writes about what a client sent: never longer than asked, never a control
 * character.
 */
public final class Texts {
  private Texts() {}

  /**
   * At most {@code max} characters of {@code text}, anything outside printable ASCII shown as '?'.
   */
  public static String printable(String text, int max) {
    if (text == null) {
      return "";
    }
    StringBuilder out = new StringBuilder(Math.min(text.length(), max) + 3);
    for (int i = 0; i < text.length(); i++) {
      if (out.length() >= max) {
        return out.append("...").toString();
      }
      char c = text.charAt(i);
      out.append(c < 0x20 || c > 0x7e ? '?' : c);
    }
    return out.toString();
  }

  /** {"error": message} as JSON bytes; the message is made printable and JSON-escaped here. */
  public static byte[] errorJson(String message) {
    String text = printable(message, 400).replace("\\", "\\\\").replace("\"", "\\\"");
    return ("{\"error\":\"" + text + "\"}").getBytes(StandardCharsets.US_ASCII);
  }
}
