"""A casino, its gamblers and their conscience (figure 3.2 of the jHisteg thesis)."""
