mod coding;
mod real_model;
mod replay;
mod scripted;
mod shipped;
