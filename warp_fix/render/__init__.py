"""Rendering of Reports, Comparisons, Findings, Plans and Ledgers: terminal, Markdown, HTML."""
