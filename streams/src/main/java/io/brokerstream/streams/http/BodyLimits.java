package io.brokerstream.streams.http;

/**
 * The largest body a request may have, by its method and raw path (the edge holds each route to its
 * own).
 */
@FunctionalInterface
public interface BodyLimits {
  int maxBodyBytes(String method, String rawPath);
}
