"""The model client: streaming calls through the anthropic SDK, the model catalog, cached limits."""
