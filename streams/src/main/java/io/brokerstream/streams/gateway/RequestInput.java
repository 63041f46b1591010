package io.brokerstream.streams.gateway;

import io.brokerstream.rules.Identifiers;
import io.brokerstream.streams.http.HttpCall;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * What a stranger sends before any of it is believed: the body (JSON only, bounded), path segments
 * (percent-decoded exactly once, strictly) and query numbers. Every refusal is an HttpError naming
 * the problem, and nothing is written for a refused request.
 */
final class RequestInput {
  private RequestInput() {}

  /**
   * The body of a JSON request: 415 for another content type, 413 beyond maxBytes (the edge read it
   * whole).
   */
  static byte[] jsonBody(HttpCall call, int maxBytes) {
    String type = call.header("Content-Type");
    String media = type == null ? "" : type.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    if (!media.equals("application/json")) {
      throw new HttpError(
          415,
          "Content-Type must be application/json, got "
              + (type == null ? "none" : "'" + printable(type) + "'"));
    }
    byte[] body = call.body();
    if (body.length > maxBytes) {
      throw new HttpError(413, "body larger than " + maxBytes + " bytes");
    }
    return body;
  }

  /**
   * A path segment that names an id: decoded once, then held to the one id rule (400 otherwise).
   */
  static String id(String raw, String what) {
    String text = segment(raw, what);
    String problem = Identifiers.problem(text, Identifiers.MAX_ID);
    if (problem != null) {
      throw new HttpError(400, what + " " + problem);
    }
    return text;
  }

  /**
   * A path segment from the raw (still encoded) path, decoded once: %XX as UTF-8, '+' stays '+'.
   * Malformed escapes, bytes that are not UTF-8 and control characters are refused (400).
   */
  static String segment(String raw, String what) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%') {
        if (i + 2 >= raw.length()
            || Character.digit(raw.charAt(i + 1), 16) < 0
            || Character.digit(raw.charAt(i + 2), 16) < 0) {
          throw new HttpError(400, what + ": bad percent-encoding in '" + printable(raw) + "'");
        }
        bytes.write(
            Character.digit(raw.charAt(i + 1), 16) * 16 + Character.digit(raw.charAt(i + 2), 16));
        i += 2;
      } else if (c > 0x7e) {
        throw new HttpError(400, what + ": characters beyond ASCII must be percent-encoded");
      } else {
        bytes.write(c);
      }
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes.toByteArray()))
              .toString();
    } catch (CharacterCodingException e) {
      throw new HttpError(400, what + ": not UTF-8 once decoded");
    }
    if (text.isEmpty() || hasControl(text)) {
      throw new HttpError(400, what + ": empty or with control characters");
    }
    return text;
  }

  static boolean hasControl(CharSequence text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A query parameter as a whole number within [min, max] (raw query, decoded once), else the
   * fallback.
   */
  static long queryLong(HttpCall call, String name, long fallback, long min, long max) {
    String text = queryText(call, name, null);
    if (text == null) {
      return fallback;
    }
    // ASCII digits only (Long.parseLong takes any script's digits), and no more than fit: judged as
    // text.
    if (text.isEmpty() || text.length() > 18 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw HttpError.badField(
          name, "must be a whole number of milliseconds between " + min + " and " + max);
    }
    long v = Long.parseLong(text);
    if (v < min || v > max) {
      throw HttpError.badField(name, "must be between " + min + " and " + max + ", got " + v);
    }
    return v;
  }

  /** A query parameter's value (raw query, decoded once), or the fallback when it is absent. */
  static String queryText(HttpCall call, String name, String fallback) {
    String query = call.rawQuery();
    if (query == null) {
      return fallback;
    }
    for (String pair : query.split("&")) {
      String[] kv = pair.split("=", 2);
      if (kv[0].equals(name) && kv.length == 2) {
        return segment(kv[1], name);
      }
    }
    return fallback;
  }

  private static String printable(String raw) {
    CharBuffer out = CharBuffer.allocate(Math.min(raw.length(), 64));
    for (int i = 0; i < raw.length() && out.hasRemaining(); i++) {
      char c = raw.charAt(i);
      out.put(c < 0x20 || c > 0x7e ? '?' : c);
    }
    return out.flip().toString();
  }
}
