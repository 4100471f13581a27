"""Table contents: which rows, in which order, and what each cell says. No Textual here."""
