package io.brokerstream.trace.bench;

import io.brokerstream.trace.Stages;
import java.util.Locale;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * What the order path's stage tracing costs, measured alone (one thread, no stack): the check every
 * unsampled order pays at each stage, and the headers a sampled one gets (mark, the gateway's two
 * stamps, the decision's two, a clock read for each). The share of the whole system's CPU per order
 * is then derived from a figure measured with the stack running (the argument). Run by
 * `./brokerstream bench tracing`.
 *
 * <p>Arguments: [one in N orders sampled (100)] [whole-stack CPU microseconds per order (1720)].
 */
public final class TracingBench {
  private static final int STAGES_CHECKED =
      2; // the gateway's submit and the decision each look once

  public static void main(String[] args) {
    int oneIn = args.length > 0 ? Integer.parseInt(args[0]) : 100;
    double stackMicrosPerOrder = args.length > 1 ? Double.parseDouble(args[1]) : 1720;
    long sink = 0;
    for (int round = 0; round < 3; round++) { // the last round is the measured one
      long t0 = System.nanoTime();
      int n = 20_000_000;
      RecordHeaders empty = new RecordHeaders();
      for (int i = 0; i < n; i++) {
        sink += Stages.sampled(empty) ? 1 : 0;
      }
      double unsampledNs = STAGES_CHECKED * (System.nanoTime() - t0) / (double) n;

      int m = 1_000_000;
      long bytes = 0;
      t0 = System.nanoTime();
      for (int i = 0; i < m; i++) {
        RecordHeaders h = new RecordHeaders();
        Stages.mark(h);
        Stages.stamp(h, Stages.GATEWAY_RECEIVED, Stages.nowMicros());
        Stages.stamp(h, Stages.GATEWAY_SENT, Stages.nowMicros());
        sink += Stages.sampled(h) ? 1 : 0;
        Stages.stamp(h, Stages.DECIDE_START, Stages.nowMicros());
        Stages.stamp(h, Stages.DECIDE_END, Stages.nowMicros());
        if (i == 0) {
          for (Header x : h) {
            bytes += x.key().length() + x.value().length + 2; // key, value and their varint lengths
          }
        }
      }
      double sampledNs = (System.nanoTime() - t0) / (double) m;
      if (round < 2) {
        continue;
      }
      double perOrderNs = ((oneIn - 1) * unsampledNs + sampledNs) / oneIn;
      System.out.printf(
          Locale.ROOT,
          "tracing, measured alone (one thread): unsampled order %.1f ns (%d checks), "
              + "sampled order %.0f ns and %d header bytes%n",
          unsampledNs,
          STAGES_CHECKED,
          sampledNs,
          bytes);
      System.out.printf(
          Locale.ROOT,
          "one in %d sampled: %.1f ns and %.2f bytes per order on average; against "
              + "%.0f us of whole-stack CPU per order: %.4f %%%n",
          oneIn,
          perOrderNs,
          bytes / (double) oneIn,
          stackMicrosPerOrder,
          100 * perOrderNs / (stackMicrosPerOrder * 1000));
    }
    if (sink == 42) {
      System.out.println();
    }
  }
}
