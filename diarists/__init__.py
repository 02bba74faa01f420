"""diarylab: diarists."""
