package io.brokerstream.streams.state;

import io.brokerstream.avro.Order;

/**
 * A working (GTC) order in its member's task: the order as sent, when the broker received it, the buying
 * power it holds (micros) and the equity whose book it rests on.
 */
public record OpenOrder(Order order, long receivedMs, long reserved, String underlyingId) {}
