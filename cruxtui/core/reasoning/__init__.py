"""Chains of thought: parsing into claims, judging claims, aligning them with the trace."""
