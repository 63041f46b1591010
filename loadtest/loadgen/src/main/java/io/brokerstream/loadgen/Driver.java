package io.brokerstream.loadgen;

/** Sends one order of a step, without waiting for it: answers are recorded by callbacks. */
interface Driver extends AutoCloseable {
  void send(StepState step, int seq, OrderMix.Next order);

  /** Orders sent whose answer has not come yet. */
  int inFlight();

  @Override
  void close();
}
