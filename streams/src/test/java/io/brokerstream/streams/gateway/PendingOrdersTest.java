package io.brokerstream.streams.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PendingOrdersTest {
  private final AtomicLong now = new AtomicLong(1_000);
  private final PendingOrders pending = new PendingOrders(3, 100, now::get);

  @Test
  void anAcceptedOrderIsPendingUntilItsResultIsMaterialized() {
    pending.accepted("m1|o1");
    assertTrue(pending.isPending("m1|o1"));
    pending.decided("m1|o1");
    assertFalse(pending.isPending("m1|o1"));
  }

  @Test
  void decidingTellsHowLongAfterItsWriteAResultCameAndOnlyForOrdersStillRemembered() {
    pending.accepted("m1|o1");
    pending.accepted("m1|o2");
    now.addAndGet(40);
    assertEquals(40, pending.decided("m1|o1"));
    assertEquals(-1, pending.decided("m1|o1"), "decided once");
    assertEquals(-1, pending.decided("m2|o9"), "never written here");
    now.addAndGet(61);
    assertEquals(-1, pending.decided("m1|o2"), "past its TTL: not timed");
  }

  @Test
  void anOrderDecidedBetweenTheStoreReadAndThePendingLookIsFoundNotUnknown() {
    pending.accepted("m1|o1");
    AtomicInteger reads = new AtomicInteger();
    // the results processor stores the result and then decides the order, right after the first
    // read
    PendingOrders.Status<String> status =
        pending.status(
            "m1|o1",
            () -> {
              if (reads.incrementAndGet() == 1) {
                pending.decided("m1|o1");
                return null;
              }
              return "ACCEPTED";
            });
    assertEquals("ACCEPTED", status.result());
    assertFalse(status.pending());
  }

  @Test
  void aStatusIsTheStoredResultElsePendingElseUnknown() {
    pending.accepted("m1|o1");
    assertEquals("FILLED", pending.status("m1|o1", () -> "FILLED").result());
    PendingOrders.Status<String> waiting = pending.status("m1|o1", () -> null);
    assertTrue(waiting.pending());
    assertNull(waiting.result());
    PendingOrders.Status<String> unknown = pending.status("m2|o1", () -> null);
    assertFalse(unknown.pending());
    assertNull(unknown.result());
  }

  @Test
  void anotherMembersOrderWithTheSameIdIsNotPending() {
    pending.accepted("m1|o1");
    assertFalse(pending.isPending("m2|o1"));
    assertFalse(pending.isPending("never-accepted"));
  }

  @Test
  void anEntryExpiresAfterItsTtl() {
    pending.accepted("m1|o1");
    now.addAndGet(100);
    assertTrue(pending.isPending("m1|o1"));
    now.addAndGet(1);
    assertFalse(pending.isPending("m1|o1"));
    assertEquals(0, pending.size());
  }

  @Test
  void pastCapacityNewOrdersAreNotRememberedUntilOldOnesExpire() {
    pending.accepted("m|1");
    pending.accepted("m|2");
    pending.accepted("m|3");
    pending.accepted("m|4");
    assertFalse(pending.isPending("m|4"));
    assertEquals(3, pending.size());
    now.addAndGet(101);
    pending.accepted("m|5");
    assertTrue(pending.isPending("m|5"));
    assertEquals(1, pending.size());
  }

  @Test
  void aFullTableIsSweptAtMostOncePerTenthOfTheTtlNotOncePerOrder() {
    pending.accepted("m|1");
    pending.accepted("m|2");
    pending.accepted("m|3");
    for (int i = 0; i < 1000; i++) {
      pending.accepted("m|x" + i); // full, nothing expired: one sweep, then none until 10 ms later
    }
    assertEquals(1, pending.sweeps());
    now.addAndGet(9);
    pending.accepted("m|y");
    assertEquals(1, pending.sweeps());
    now.addAndGet(1);
    pending.accepted("m|z");
    assertEquals(2, pending.sweeps());
    assertFalse(pending.isPending("m|z"));
  }

  @Test
  void nonsenseSettingsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new PendingOrders(-1, 100, now::get));
    assertThrows(IllegalArgumentException.class, () -> new PendingOrders(10, 0, now::get));
  }
}
