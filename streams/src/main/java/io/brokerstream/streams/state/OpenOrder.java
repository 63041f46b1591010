package io.brokerstream.streams.state;

import io.brokerstream.avro.Order;

/**
 * A working order in its member's task: the order as it now stands (amended or not), when the
 * broker received it, when it took its current place on the book (its arrival, or its last amend),
 * the buying power it holds (micros), the equity whose book it rests on, when it expires (0: never,
 * GTC), and the number of its current book entry (1 when it rested, one more per amend): a trigger
 * carries the number of the entry it crossed, so one from an entry an amend replaced is told apart
 * whatever the clock says.
 */
public record OpenOrder(
    Order order,
    long receivedMs,
    long placedMs,
    long reserved,
    String underlyingId,
    long expiresMs,
    long entry) {}
