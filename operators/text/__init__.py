"""Text operators: Moses-style tokenization and detokenization, CJK segmentation."""
