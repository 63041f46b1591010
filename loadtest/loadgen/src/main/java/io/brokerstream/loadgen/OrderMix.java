package io.brokerstream.loadgen;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The orders of a system run: market orders from every client, on popular equities more than on
 * others and on options for a share of them. Each account opens a position and closes it again with
 * its next order on the same instrument, so positions and buying power stay bounded however long a
 * run lasts: every order is meant to fill. Not thread-safe: one scheduler draws them.
 */
final class OrderMix {
  record Next(Plan.Client client, String account, String instrument, boolean buy, long quantity) {}

  private final List<Plan.Client> clients;
  private final List<String> equities;
  private final List<String> options;
  private final double optionShare;
  private final SplittableRandom random;
  private final Map<String, Long> held = new HashMap<>();

  OrderMix(Plan plan) {
    this.clients = plan.clients();
    this.equities = plan.equities();
    this.options = plan.options();
    this.optionShare = options.isEmpty() ? 0 : plan.optionShare();
    this.random = new SplittableRandom(plan.seed());
  }

  Next next() {
    Plan.Client client = clients.get(random.nextInt(clients.size()));
    String account = client.accounts().get(random.nextInt(client.accounts().size()));
    boolean option = random.nextDouble() < optionShare;
    List<String> from = option ? options : equities;
    // squaring a uniform draw favours the first instruments: a few popular names, a long tail
    double u = random.nextDouble();
    String instrument = from.get((int) (u * u * from.size()));
    String key = account + '|' + instrument;
    Long holding = held.remove(key);
    if (holding != null) {
      return new Next(client, account, instrument, false, holding);
    }
    long quantity = 1 + random.nextInt(option ? 3 : 20);
    held.put(key, quantity);
    return new Next(client, account, instrument, true, quantity);
  }
}
