package io.brokerstream.streams.http;

/**
 * What one client may hold of the HTTP edge. Every limit protects the other clients: a stranger who
 * opens many sockets, sends a request a byte at a time, promises a body and never sends it, or
 * pipelines without end holds a socket and a little memory for a bounded time, never a thread.
 *
 * @param maxConnections open connections in all; the next one is answered 503 and closed
 * @param maxConnectionsPerAddress open connections from one client address; the next one likewise
 * @param headerTimeoutMs from a request's first byte until its request line and headers are
 *     complete (408)
 * @param bodyTimeoutMs from a request's headers until its last body byte (408)
 * @param idleTimeoutMs a keep-alive connection with no request in flight is closed after this long
 *     quiet
 * @param maxLineBytes the request line (414 beyond)
 * @param maxHeaderBytes all headers together (431 beyond)
 * @param maxBodyBytes the largest body any route takes (413 beyond; routes may allow less)
 * @param maxQueuedPerConnection pipelined requests read ahead of the one in flight; past this the
 *     edge stops reading the connection until the queue drains
 */
public record EdgeLimits(
    int maxConnections,
    int maxConnectionsPerAddress,
    long headerTimeoutMs,
    long bodyTimeoutMs,
    long idleTimeoutMs,
    int maxLineBytes,
    int maxHeaderBytes,
    int maxBodyBytes,
    int maxQueuedPerConnection) {

  public EdgeLimits {
    if (maxConnections < 1
        || maxConnectionsPerAddress < 1
        || headerTimeoutMs < 1
        || bodyTimeoutMs < 1
        || idleTimeoutMs < 1
        || maxLineBytes < 64
        || maxHeaderBytes < 256
        || maxBodyBytes < 0
        || maxQueuedPerConnection < 1) {
      throw new IllegalArgumentException("edge limits out of range: " + this);
    }
  }
}
