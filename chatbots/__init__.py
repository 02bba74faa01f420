"""diarylab: chatbots — anything that replies to a diarist (API, local model, fixed reply)."""
