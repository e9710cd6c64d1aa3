"""FactBoard on the Hub: the results dataset repo is the source of truth and the local data root
a cache of it (client, layout, sync, queue, background, space). See docs/ARCHITECTURE.md."""
