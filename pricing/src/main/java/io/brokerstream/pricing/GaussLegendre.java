package io.brokerstream.pricing;

/**
 * Gauss-Legendre quadrature on [-1, 1]: nodes and weights from Newton's method on the Legendre
 * polynomial.
 */
record GaussLegendre(double[] nodes, double[] weights) {
  static GaussLegendre of(int points) {
    double[] x = new double[points];
    double[] w = new double[points];
    for (int i = 0; i < points; i++) {
      double z =
          Math.cos(Math.PI * (i + 0.75) / (points + 0.5)); // Tricomi's guess for the i-th root
      double derivative = 0;
      for (int iteration = 0; iteration < 100; iteration++) {
        double[] pd = legendre(points, z);
        derivative = pd[1];
        double dz = pd[0] / derivative;
        z -= dz;
        if (Math.abs(dz) < 1e-15) {
          break;
        }
      }
      derivative = legendre(points, z)[1];
      x[i] = z;
      w[i] = 2.0 / ((1.0 - z * z) * derivative * derivative);
    }
    return new GaussLegendre(x, w);
  }

  /** P_n(z) and its derivative, by the three-term recurrence. */
  private static double[] legendre(int n, double z) {
    double previous = 1.0;
    double current = z;
    for (int k = 2; k <= n; k++) {
      double next = ((2 * k - 1) * z * current - (k - 1) * previous) / k;
      previous = current;
      current = next;
    }
    return new double[] {current, n * (z * current - previous) / (z * z - 1.0)};
  }
}
