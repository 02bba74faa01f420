"""The diary experiment: steered diarists, chatbots answering, four entries per conversation."""

from diarylab.experiments.kinds.diary.kind import DiaryKind

KIND = DiaryKind()
