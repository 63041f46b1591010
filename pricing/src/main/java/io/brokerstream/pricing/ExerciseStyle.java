package io.brokerstream.pricing;

public enum ExerciseStyle {
  EUROPEAN,
  AMERICAN
}
