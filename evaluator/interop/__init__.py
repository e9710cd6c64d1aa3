"""Results that travel: Every Eval Ever (EEE) records out of FactBoard and into it.

    eee.py       the vendored schemas (schemas/, MIT), validation, shared names and paths
    export.py    stored runs -> EEE record + samples file (datastore layout; zip for downloads)
    importer.py  EEE records -> runs scored here (origin "imported") or published numbers
    cli.py       `python -m evaluator import-eee` and `export --format eee`

See README.md ("Every Eval Ever") and docs/ARCHITECTURE.md.
"""
