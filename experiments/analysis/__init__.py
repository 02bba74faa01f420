"""Analysis of a diary run: cluster bootstrap over diarists, the preregistered comparisons,
hypothesis verdicts and the Markdown report. Everything here reads pandas tables in the shape
fixed by `experiments.kinds.diary.frames`; nothing here touches the store or a model."""
