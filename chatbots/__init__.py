"""diarylab: chatbots."""
