package io.brokerstream.streams.state;

import io.brokerstream.avro.Order;

/**
 * A working order in its member's task: the order as it now stands (amended or not), when the
 * broker received it, when it took its current place on the book (its arrival, or its last amend),
 * the buying power it holds (micros), the equity whose book it rests on, and when it expires (0:
 * never, GTC).
 */
public record OpenOrder(
    Order order,
    long receivedMs,
    long placedMs,
    long reserved,
    String underlyingId,
    long expiresMs) {}
