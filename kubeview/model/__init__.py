"""Pure cluster model: API objects in, numpy allocation arrays out. No I/O, no kubernetes import."""
