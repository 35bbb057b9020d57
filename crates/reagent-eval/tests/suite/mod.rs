mod coding;
mod real_model;
mod scripted;
mod shipped;
mod replay;
