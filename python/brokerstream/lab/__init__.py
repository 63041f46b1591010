"""The scaling lab: the standard experiment at resource steps, and what each dollar buys."""
