"""brokerstream tooling: the stack launcher, generators, load drivers and cost analytics."""
