"""Model builders; each module writes one model family as `train` IR."""
