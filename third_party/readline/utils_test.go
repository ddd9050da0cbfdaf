package readline
