"""The final cross-check of the reflection against every emitted output (``OS9000``). It reads
the code with ``emitted/`` only and shares no code with the steps it checks."""
