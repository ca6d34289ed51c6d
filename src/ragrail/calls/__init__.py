"""The model-call layer: concurrent, cached, retried, costed calls (``layer``), the
providers behind them, the reply cache and the prices."""
