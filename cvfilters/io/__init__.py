"""Files: which decoder reads a file, the encoders OpenCV lacks, reading and writing still
images, animations and multi-page TIFFs, and videos frame by frame.

Imports ``engine`` (videos run a pipeline per frame) and the layers below it.
"""
