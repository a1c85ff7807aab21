"""Small UI components of the viewer; each takes plain data and never touches files itself."""
