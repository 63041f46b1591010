package io.brokerstream.streams.http;

import java.net.InetAddress;
import java.util.Map;

/**
 * One complete request, as the edge read it (line, headers and whole body, within the edge's
 * limits), and the one answer it gets. The handler may answer on any thread, at once or later (a
 * long poll); a second answer is ignored, and an answer to a client that went away is dropped.
 */
public interface HttpCall {
  String method();

  /** The path as sent, still percent-encoded: each segment is decoded once, by whoever reads it. */
  String rawPath();

  /** The query as sent, still encoded; null when there is none. */
  String rawQuery();

  /** The path and query as sent. */
  String rawTarget();

  /** The first value of a header (names are case-insensitive), or null. */
  String header(String name);

  byte[] body();

  InetAddress client();

  /**
   * Answers once; {@code headers} may be empty. {@code body} is sent as given, of {@code
   * contentType}.
   */
  void respond(int status, String contentType, byte[] body, Map<String, String> headers);

  /**
   * Runs if the client hangs up before this call is answered (at once if it already has), so a long
   * poll gives back what it holds without waiting out its time. Not run once the call is answered.
   */
  void onHangUp(Runnable action);
}
